/*
 * px_synth.c - writes the SYNTHETIC PX trace set (data/px/synthetic.csv) to
 * stdout, or to the file named by the only argument. The text comes from
 * trk_px_synth_csv() with the fixed seed and count of px.h, so the committed
 * file can be checked byte for byte (tests/test_racetrack_px.c) and the
 * tension model it encodes is documented in docs/px-model.md.
 *
 *   build/tools/px_synth > data/px/synthetic.csv
 */
#include <stdio.h>
#include <stdlib.h>

#include "racetrack/px.h"

int main(int argc, char **argv)
{
	if (argc > 2) {
		fprintf(stderr, "usage: px_synth [OUTPUT.csv]\n");
		return 2;
	}
	sf_err err = { 0 };
	size_t len;
	char *csv = trk_px_synth_csv(TRK_PX_SYNTH_SEED, TRK_PX_SYNTH_COUNT, &len, &err);
	if (!csv) {
		fprintf(stderr, "px_synth: %s\n", err.msg);
		return 1;
	}
	FILE *out = argc == 2 ? fopen(argv[1], "wb") : stdout;
	if (!out) {
		perror(argv[1]);
		free(csv);
		return 1;
	}
	int bad = fwrite(csv, 1, len, out) != len;
	bad |= argc == 2 ? fclose(out) != 0 : fflush(out) != 0;
	free(csv);
	if (bad) {
		perror("px_synth: write");
		return 1;
	}
	return 0;
}
