#!/bin/sh
# Checks the layering of server/ (docs/architecture.md): a file in one
# layer includes files of its own layer, of the layers listed before it,
# and of core/, never of a layer listed after it; core/ includes nothing
# from server/. Prints each offending #include and exits 1, or exits 0.
#
#   sh scripts/layers.sh
set -eu
cd "$(dirname "$0")/.."
LAYERS="base store http jobs api cli"
bad=0
rank() { # layer name -> position in LAYERS, or empty
	i=0
	for l in $LAYERS; do
		i=$((i + 1))
		[ "$l" = "$1" ] && { echo "$i"; return; }
	done
}
for dir in server/*/; do
	layer=$(basename "$dir")
	mine=$(rank "$layer")
	if [ -z "$mine" ]; then
		echo "layers: server/$layer is not a known layer (docs/architecture.md lists: $LAYERS)"
		bad=1
		continue
	fi
	for f in "$dir"*.[ch]; do
		[ -e "$f" ] || continue
		# includes of another layer read "../<layer>/<file>"
		for other in $(sed -n 's|^#include "\.\./\([a-z]*\)/[^"]*"|\1|p' "$f"); do
			[ "$other" = "core" ] && continue
			theirs=$(rank "$other")
			if [ -z "$theirs" ] || [ "$theirs" -gt "$mine" ]; then
				echo "layers: $f ($layer) includes from $other, a layer above it"
				bad=1
			fi
		done
	done
done
if grep -rn '#include "[./]*server/' core >/dev/null 2>&1; then
	grep -rn '#include "[./]*server/' core | sed 's/^/layers: core includes server: /'
	bad=1
fi
[ "$bad" -eq 0 ] && echo "layers: server/ is layered ($LAYERS)"
exit "$bad"
