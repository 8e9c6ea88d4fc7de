#!/usr/bin/env bash
# The notebooks at one scale, one at a time, each timed: wall time, peak RSS (of the notebook run and its
# kernel), the peak disk its databases took (each notebook runs with TMPDIR in the campaign folder, sampled with
# du every 2 s, so another process's files do not count) and its exit code, as a TSV and a
# Markdown table (docs/time-to-result.md's measured rows come from here).  Prints the dry run's estimate first.
#   scripts/scale_campaign.sh SCALE [NOTEBOOK ...]       e.g. scripts/scale_campaign.sh large 04_transactions
set -uo pipefail
cd "$(dirname "$0")/.."
scale="${1:?scale: smoke, default, large or full}"; shift
notebooks=("$@")
[ ${#notebooks[@]} -gt 0 ] || notebooks=($(.venv/bin/kvlab notebooks list | awk '/^[0-9][0-9]_/{print $1}'))
out="${OUT:-results/scale-$scale-$(date -u +%Y%m%d-%H%M%S)}"
mkdir -p "$out"
tsv="$out/campaign.tsv"
printf "notebook\tscale\twall_s\tpeak_rss_mib\tpeak_disk_gib\texit\tcommand\n" > "$tsv"
for nb in "${notebooks[@]}"; do
    cmd=".venv/bin/kvlab notebooks run --scale $scale --only $nb --out $out/$nb"
    .venv/bin/kvlab notebooks run --scale "$scale" --only "$nb" --dry-run | grep -E "^==|time|disk " | tee -a "$out/estimate.txt"
    tmp="$out/tmp-$nb"
    mkdir -p "$tmp"
    echo 0 > "$out/.peak"
    ( while sleep 2; do u=$(du -sb "$tmp" 2>/dev/null | cut -f1); p=$(cat "$out/.peak"); \
        [ "${u:-0}" -gt "$p" ] && echo "$u" > "$out/.peak"; done ) & watcher=$!
    start=$(date +%s.%N)
    TMPDIR="$tmp" KVLAB_TMPDIR="$tmp" /usr/bin/time -v -o "$out/$nb.time" $cmd > "$out/$nb.log" 2>&1
    rc=$?
    end=$(date +%s.%N)
    kill $watcher 2>/dev/null; wait $watcher 2>/dev/null
    rm -rf "$tmp"
    rss=$(awk -F': ' '/Maximum resident/{printf "%.0f", $2/1024}' "$out/$nb.time")
    disk=$(python3 -c "print(f'{$(cat "$out/.peak") / 2**30:.2f}')")
    wall=$(python3 -c "print(f'{$end - $start:.0f}')")
    printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$nb" "$scale" "$wall" "$rss" "$disk" "$rc" "kvlab notebooks run --scale $scale --only $nb" | tee -a "$tsv"
done
rm -f "$out/.peak"
echo "| notebook | scale | wall | peak RSS | peak disk | exit | command |" > "$out/campaign.md"
echo "|---|---|---|---|---|---|---|" >> "$out/campaign.md"
tail -n +2 "$tsv" | awk -F'\t' '{printf "| %s | %s | %d min %02d s | %s MiB | %s GiB | %s | `%s` |\n", $1, $2, $3/60, $3%60, $4, $5, $6, $7}' >> "$out/campaign.md"
cat "$out/campaign.md"
