/* The generated name and id indexes (tools/gen_index.c) give exactly what the linear reference
 * scans give: every parameter name and alias, every parameter id, every preset name, alias and
 * Hugging Face id (in any case), and nothing for names that are not there. */
#include <criterion/criterion.h>

#include "internal.h"

#include <stdio.h>
#include <string.h>

Test(name_index, every_parameter_name_and_alias)
{
    size_t n = gpufit__param_count(), checked = 0;
    for (size_t i = 0; i < n; i++) {
        const gpufit__param_entry *e = gpufit__param_at(i);
        cr_assert_eq(gpufit__param_find_name(e->name, strlen(e->name)),
                     gpufit__param_find_name_linear(e->name, strlen(e->name)), "%s", e->name);
        cr_assert_eq(gpufit__param_find(e->id), e, "id %d", (int)e->id);
        cr_assert_eq(gpufit__param_find(e->id), gpufit__param_find_linear(e->id));
        for (const char *p = e->aliases; p != NULL && *p != '\0';) {
            size_t k = strcspn(p, " ");
            cr_assert_eq(gpufit__param_find_name(p, k), gpufit__param_find_name_linear(p, k),
                         "alias %.*s", (int)k, p);
            cr_assert_not_null(gpufit__param_find_name(p, k));
            p += k;
            p += strspn(p, " ");
            checked++;
        }
        checked++;
    }
    cr_assert_gt(checked, n, "aliases were checked too");
}

Test(name_index, misses_and_near_misses)
{
    static const char *const no[] = {"", "a", "seq_le", "seq_lenn", "SEQ_LEN", "zzzz", "tp ",
                                     "micro_batch\n"};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        cr_assert_null(gpufit__param_find_name(no[i], strlen(no[i])), "'%s'", no[i]);
    cr_assert_null(gpufit__param_find(0));
    cr_assert_null(gpufit__param_find(-1));
    cr_assert_null(gpufit__param_find(99999));
    /* a name compared by its length only: "tp" must not match a prefix of "tpx" */
    cr_assert_null(gpufit__param_find_name("tpx", 2 + 1));
    cr_assert_not_null(gpufit__param_find_name("tpx", 2));
}

static void upper(char *s)
{
    for (; *s != '\0'; s++)
        if (*s >= 'a' && *s <= 'z')
            *s = (char)(*s - 'a' + 'A');
}

static void preset_agrees(const char *name, size_t len)
{
    struct gpufit_model a, b;
    memset(&a, 0, sizeof a); /* loading leaves the arrays' unused tails alone */
    memset(&b, 0, sizeof b);
    int32_t want = gpufit__preset_find_linear(name, len);
    cr_assert_geq(want, 0, "%.*s is a preset key", (int)len, name);
    cr_assert_eq(gpufit__preset_load(&a, name, len, NULL), GPUFIT_OK, "%.*s", (int)len, name);
    cr_assert_eq(gpufit__preset_get((size_t)want, &b, NULL, NULL, NULL), GPUFIT_OK);
    /* the loaded architecture is the linear scan's preset (the name echoes the typed one) */
    memcpy(b.name, a.name, sizeof b.name);
    cr_assert_eq(memcmp(&a, &b, sizeof a), 0, "%.*s loads preset row %d", (int)len, name,
                 (int)want);
}

Test(name_index, every_preset_key_in_any_case)
{
    const char *name, *aliases, *hf, *vid, *vp;
    char buf[256];
    for (size_t i = 0; gpufit__preset_get(i, NULL, &name, &aliases, &hf) == GPUFIT_OK; i++) {
        preset_agrees(name, strlen(name));
        preset_agrees(hf, strlen(hf));
        snprintf(buf, sizeof buf, "%s", hf);
        upper(buf);
        preset_agrees(buf, strlen(buf));
        for (const char *p = aliases; *p != '\0';) {
            size_t k = strcspn(p, " ");
            if (k > 0)
                preset_agrees(p, k);
            p += k;
            p += strspn(p, " ");
        }
    }
    for (size_t v = 0; gpufit__preset_hf_variant_at(v, &vid, &vp); v++) {
        preset_agrees(vid, strlen(vid));
        snprintf(buf, sizeof buf, "%s", vid);
        upper(buf);
        preset_agrees(buf, strlen(buf));
    }
    struct gpufit_model m;
    cr_assert_eq(gpufit__preset_load(&m, "llama-3-70", 10, NULL), GPUFIT_E_NOT_FOUND);
    cr_assert_eq(gpufit__preset_find_linear("llama-3-70", 10), -1);
    memset(buf, 'x', 200);
    cr_assert_eq(gpufit__preset_load(&m, buf, 200, NULL), GPUFIT_E_NOT_FOUND);
}
