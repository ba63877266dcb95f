/* The cost table of the mitigations (lib/advise/costs.c) is the one docs/mitigations.md
 * prints: every row of the code is a row of the document's table, word for word, and the
 * document's table has no other row. */
#include <criterion/criterion.h>

#include "eval.h"

#include <stdio.h>
#include <string.h>

Test(costs, the_docs_table_is_the_code_table)
{
    FILE *f = fopen("docs/mitigations.md", "r");
    cr_assert_not_null(f, "run from the repository root");
    static char doc[65536];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    fclose(f);
    doc[n] = '\0';
    const char *head = strstr(doc, "| change | cost | why that cost |\n|---|---|---|\n");
    cr_assert_not_null(head, "the cost table's header");
    const char *p = head + strlen("| change | cost | why that cost |\n|---|---|---|\n");
    int doc_rows = 0;
    for (const char *q = p; q[0] == '|'; q = strchr(q, '\n') + 1)
        doc_rows++;
    cr_assert_eq(doc_rows, GPUFIT__COST_COUNT, "rows in docs/mitigations.md");
    for (int32_t id = 0; id < GPUFIT__COST_COUNT; id++) {
        const gpufit__cost_row *r = gpufit__cost_row_at(id);
        char line[256];
        snprintf(line, sizeof line, "| %s | %s | %s |\n", r->change, r->cost_text, r->why);
        cr_assert_not_null(strstr(p, line), "docs/mitigations.md lacks the row: %s", line);
        double base = 0.0;
        cr_assert_eq(sscanf(r->cost_text, "%lf", &base), 1);
        cr_assert_float_eq(base, r->base, 1e-12, "%s: the text starts with the base", r->change);
        cr_assert(r->per == 0.0 ? strchr(r->cost_text, ' ') == NULL
                                : strchr(r->cost_text, '+') != NULL,
                  "%s: a cost with a slope says so", r->change);
    }
    cr_assert_null(gpufit__cost_row_at(GPUFIT__COST_COUNT));
    cr_assert_float_eq(gpufit__cost(GPUFIT__COST_MICRO_BATCH, 2.0), 2.0, 1e-12);
    cr_assert_float_eq(gpufit__cost(GPUFIT__COST_FSDP, 3.0), 8.0, 1e-12);
    cr_assert_float_eq(gpufit__cost(GPUFIT__COST_ZERO, 2.0), 2.0, 1e-12);
}
