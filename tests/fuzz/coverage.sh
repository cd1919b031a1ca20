#!/bin/sh
# Line coverage of the code each fuzz target is about: make fuzz-coverage calls
#   tests/fuzz/coverage.sh COV OUT TARGET...
# with COV/fuzz_<target> built with -fprofile-instr-generate. Every input of
# OUT/corpus/<target> (what make fuzz kept) and of the committed seeds runs
# once (-runs=0); llvm-cov then reports, per function, the lines run of the
# functions that make up what the target is about (the parser, the
# validator; not the rest of their files, such as the generators).
set -eu
cov=$1
out=$2
shift 2
here=$(dirname "$0")
for t in "$@"; do
	case $t in
	job_request)
		files="server/jobs/job_request.c core/params.c core/search/ga.c core/lattice/kind.c core/lattice/puzzle.c core/lattice/puzzle_json.c core/racetrack/kind.c core/racetrack/search.c core/racetrack/search_json.c core/digger/kind.c"
		funcs="jobs_parse_request|sf_params_read|read_one|_params_parse|params_from_json|params_check|read_target|read_model|read_nullable|read_flag" ;;
	sequence)
		files="core/lattice/lattice.c core/stars.c"
		funcs="lat_seq_parse|lat_parse_kind|lat_fold_score|lat_check_budget|stars_parse_strategy" ;;
	digger_level)
		files="core/digger/codec.c core/digger/check.c core/digger/engine.c core/digger/solve.c"
		funcs="dig_level_from_json|dig_taps_from_json|codec.c:(read_|get_|only_keys)|dig_level_check|engine.c:check_|dig_check_json|check.c:(read_body|replay)" ;;
	px_model)
		files="core/racetrack/px.c core/racetrack/px_json.c"
		funcs="trk_px_parse|trk_px_model_from_json|parse_header|parse_value|trk_px_model_new" ;;
	routes)
		files="server/http/routes.c server/http/http.c"
		funcs="route_find|route_param|pattern_match|path_check|http_query_decode" ;;
	*) files="" funcs="^$" ;;
	esac
	dirs="$here/corpus/$t"
	[ -d "$out/corpus/$t" ] && dirs="$dirs $out/corpus/$t"
	[ -d "$here/crashes/$t" ] && dirs="$dirs $here/crashes/$t"
	rm -f "$cov/$t.profraw"
	# shellcheck disable=SC2086
	LLVM_PROFILE_FILE="$cov/$t.profraw" "$cov/fuzz_$t" -runs=0 $dirs >"$cov/$t.log" 2>&1
	llvm-profdata merge -sparse -o "$cov/$t.profdata" "$cov/$t.profraw"
	echo "== fuzz_$t: $(find $dirs -type f | wc -l) inputs; lines run of the functions it is about:"
	# shellcheck disable=SC2086
	llvm-cov report -show-functions "$cov/fuzz_$t" -instr-profile="$cov/$t.profdata" $files |
		awk -v re="$funcs" '$1 ~ re && NF == 10 {
			printf "    %-32s %4d/%-4d %7s\n", $1, $5 - $6, $5, $7; run += $5 - $6; all += $5 }
			END { if (all) printf "    %-32s %4d/%-4d %6.2f%%\n", "all of them", run, all, 100 * run / all }'
done
