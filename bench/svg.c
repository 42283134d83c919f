/* SPDX-License-Identifier: MIT */
/*
 * bench/svg.c -- --svg FILE: the gains over plain 4 KiB pages as a bar chart.
 *
 * One horizontal bar per row that has a gain over plain (plain itself is the 1x line), on a
 * log scale: the gains run from about 1x (a chase at small sizes) to several hundred
 * (teardown, page tables), and a linear axis would flatten everything but the largest.
 * Bars of the deterministic figures are drawn in a second colour, the min-max of the
 * per-round gains as a whisker.  Hand-written SVG 1.1, no script, no external font: it
 * opens in any browser and pastes into a report as it is.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

#define BAR_H    16     /* px per bar */
#define GAP      6      /* px between bars */
#define LABEL_W  330    /* px for the row's name */
#define PLOT_W   520    /* px for the bars */
#define TOP      56     /* px above the first bar */
#define DECADES  3      /* the axis spans 0.1x to 1000x: log10 from -1 to 2 ... */
#define LOG_MIN  (-1.0) /* ... starting here */

static double xpos(double ratio)
{
	double l = log10(ratio);

	if (l < LOG_MIN)
		l = LOG_MIN;
	if (l > LOG_MIN + DECADES)
		l = LOG_MIN + DECADES;
	return LABEL_W + (l - LOG_MIN) / DECADES * PLOT_W;
}

/* Text for an XML attribute or element: labels come from provider names, but be safe. */
static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<') fputs("&lt;", f);
		else if (*s == '>') fputs("&gt;", f);
		else if (*s == '&') fputs("&amp;", f);
		else if (*s == '"') fputs("&quot;", f);
		else fputc(*s, f);
	}
}

int bench_write_svg(const char *path, const struct bench_result *res, char *why, size_t len)
{
	static struct bench_row rows[BENCH_MAX_CONFIGS * 8];
	unsigned n = bench_rows(res, rows, sizeof(rows) / sizeof(rows[0])), bars = 0, y;
	char size[32], ps[32];
	FILE *f;

	for (unsigned i = 0; i < n; i++)
		bars += rows[i].has_plain && rows[i].c != &res->cfg[rows[i].c->plain_ref];
	f = fopen(path, "w");
	if (!f) {
		snprintf(why, len, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%u\" font-family=\"sans-serif\" "
		"font-size=\"12\">\n", LABEL_W + PLOT_W + 70, TOP + bars * (BAR_H + GAP) + 40);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(f, "<text x=\"10\" y=\"20\" font-size=\"15\">hpshm bench: gain over plain 4 KiB pages, %s, %u "
		"worker%s, %u rounds (log scale; &gt; 1 is better)</text>\n",
		hpshm_size_format(res->opt.size, size, sizeof(size)), res->opt.workers, res->opt.workers == 1 ? "" : "s",
		res->rounds_done);
	for (int d = 0; d <= DECADES; d++) {
		double r = pow(10, LOG_MIN + d);
		double x = xpos(r);

		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%u\" stroke=\"%s\"/>\n", x, TOP - 8, x,
			TOP + bars * (BAR_H + GAP), r == 1.0 ? "black" : "#ccc");
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%gx</text>\n", x, TOP - 12, r);
	}
	y = TOP;
	for (unsigned i = 0; i < n; i++) {
		const struct bench_row *r = &rows[i];
		double x0 = xpos(1.0), x1;

		if (!r->has_plain || r->c == &res->cfg[r->c->plain_ref])
			continue;
		x1 = xpos(bench_isinf(r->vs_plain.median) ? 1e9 : r->vs_plain.median);
		fprintf(f, "<text x=\"%d\" y=\"%u\" text-anchor=\"end\">", LABEL_W - 8, y + BAR_H - 4);
		xml_text(f, r->c->label);
		fprintf(f, " %s %s%s, %u wk</text>\n", r->c->verified_page_size ?
			hpshm_size_format(r->c->verified_page_size, ps, sizeof(ps)) : "?",
			strcmp(r->workload, "setup") == 0 ? "setup " : "", r->metric, r->workers);
		fprintf(f, "<rect x=\"%.1f\" y=\"%u\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>\n", x1 < x0 ? x1 : x0, y,
			fabs(x1 - x0) < 1 ? 1 : fabs(x1 - x0), BAR_H, r->deterministic ? "#6a9f58" : "#4e79a7");
		if (!r->deterministic && r->vs_plain.n > 1)
			fprintf(f, "<line x1=\"%.1f\" y1=\"%u\" x2=\"%.1f\" y2=\"%u\" stroke=\"black\"/>\n",
				xpos(r->vs_plain.min), y + BAR_H / 2, xpos(r->vs_plain.max), y + BAR_H / 2);
		fprintf(f, "<text x=\"%.1f\" y=\"%u\">%.3gx</text>\n", (x1 > x0 ? x1 : x0) + 4, y + BAR_H - 4,
			r->vs_plain.median);
		y += BAR_H + GAP;
	}
	fprintf(f, "</svg>\n");
	if (fclose(f) != 0) {
		snprintf(why, len, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}
