#!/bin/sh
# check-format.sh SOURCE_DIR CLANG_FORMAT: every C source and header of the
# project (not vmlinux.h, generated from the guest kernel's BTF, and not
# anything under build/ or node_modules/) formatted as .clang-format says.
# Prints each file that is not, with its first differences, and exits 1.
set -u
src=$1
cf=$2
cd "$src" || exit 2
[ -f .clang-format ] || { echo "check-format: no .clang-format in $src"; exit 2; }
files=$(find agent bench common schema server tests -name node_modules -prune -o \
	-type f \( -name '*.c' -o -name '*.h' \) ! -name vmlinux.h -print | sort)
[ -n "$files" ] || { echo "check-format: no C files found under $src"; exit 2; }
n=$(echo "$files" | wc -l)
# shellcheck disable=SC2086 # one file name per word (no spaces in the tree)
out=$("$cf" --dry-run --Werror $files 2>&1)
rc=$?
if [ $rc != 0 ]; then
	echo "$out" | sed -n 's/^\([^:]*\.[ch]\):[0-9]*:[0-9]*: error: .*/\1/p' | sort -u |
		while read -r f; do echo "not formatted: $f (fix: $cf -i $f)"; done
	echo "$out" | head -30 | sed 's/^/    /'
fi
echo "check-format: $n files, clang-format exit $rc ($("$cf" --version))"
[ $rc = 0 ]
