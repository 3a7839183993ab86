#!/usr/bin/env bash
# Prints one line per `.systemLibrary` of the given Package.swift files that names a pkg-config
# module: "PKGCONFIG-NAME APT-PACKAGE..." (the packages of its `providers: [.apt([...])]`; none
# when it has no apt provider). Read by tools/cadence-run.sh (what to install) and
# tools/check-install-lists.sh (that every one is installed by both set-up commands).
# Plain awk: it runs before anything is installed.
set -euo pipefail
for f in "$@"; do
    tr '\n' ' ' <"$f" | awk '{
        n = split($0, parts, /\.systemLibrary\(/)
        for (i = 2; i <= n; i++) {
            body = parts[i]
            # The declaration ends at the next target.
            sub(/\.(target|executableTarget|testTarget|systemLibrary|binaryTarget|plugin|macro)\(.*/, "", body)
            if (!match(body, /pkgConfig: *"[^"]+"/)) continue
            pc = substr(body, RSTART, RLENGTH); sub(/pkgConfig: *"/, "", pc); sub(/"$/, "", pc)
            line = pc
            if (match(body, /\.apt\(\[[^]]*\]/)) {
                list = substr(body, RSTART + 6, RLENGTH - 7)
                m = split(list, names, /,/)
                for (j = 1; j <= m; j++) { s = names[j]; gsub(/[ "]/, "", s); if (s != "") line = line " " s }
            }
            print line
        }
    }'
done
