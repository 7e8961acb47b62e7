# shellcheck shell=bash
# The behaviour table of README.md ("What each process gets, by default") as
# claims a lane checks against what real clients did (sourced; ok/not_ok come
# from tests/lib.sh). The grammar (README's HTML comment above the table is
# its short form):
# - the first table after the heading; its columns are named by their
#   heading: "systemd" -> systemd, "cgroupfs" + "cgroup v1" -> v1,
#   "cgroupfs" + "cgroup v2" -> v2; its rows by the text of their first cell
#   before " (", without backticks ("autogroup run CMD", "a cron job");
# - a cell's FIRST code span is its claim: the process's cgroup path as
#   /proc/PID/cgroup shows it (v1: the cpu line; v2: the 0:: line), matched
#   whole; a cell that starts with "the same" claims what the cell to its
#   left claims; the rest of a cell is for people; no "|" in a cell;
# - placeholders: <root> the module's root=, <uid>, <session> (s<audit
#   session id> or p<pid>, "-<n>" when taken), <n>, <sid>, <pid> numbers,
#   <group> login or leaf-<n>; each matches any such value unless the lane
#   gives it one (KEY=VALUE below);
# - <parent>: the cgroup of the process that started it (the tmux server,
#   the cron daemon); it has no pattern: the lane must give parent=PATH.
#
#   behaviour_rows                     the row names, one a line
#   behaviour_claim ROW COL            the claim (the code span) of a cell
#   behaviour_expect ROW COL [K=V...]  the claim as an anchored ERE; K=V gives
#                                      a placeholder its value (root=agtest-1)
#   behaviour_check ROW COL OBSERVED [K=V...]   ok / not ok
#   behaviour_lint                     ok / not ok: every cell has a claim the
#                                      grammar knows
: "${BEHAVIOUR_DOC:=${abs_top_srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}/README.md}"

# The table's lines: the first table after the heading.
behaviour_table() {
        awk '/^### What each process gets, by default$/ { h = 1; next }
             h && /^\|/ { t = 1; print; next }
             t { exit }
             h && /^#/ { exit }' "$BEHAVIOUR_DOC"
}

# behaviour_cells: one line per cell, "ROW<TAB>COL<TAB>CLAIM<TAB>TEXT", with
# the claim resolved ("the same") and COL the column's name; "?" for a
# heading the grammar does not know, CLAIM empty when the cell has none.
behaviour_cells() {
        behaviour_table | awk -F'|' '
        function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
        function span(s) { return match(s, /`[^`]*`/) ? substr(s, RSTART + 1, RLENGTH - 2) : "" }
        NR == 1 {
                for (i = 3; i < NF; i++) {
                        h = trim($i); col[i] = "?"
                        if (h ~ /systemd/) col[i] = "systemd"
                        else if (h ~ /cgroupfs/ && h ~ /cgroup v1/) col[i] = "v1"
                        else if (h ~ /cgroupfs/ && h ~ /cgroup v2/) col[i] = "v2"
                }
                next
        }
        NR == 2 { next }
        {
                row = trim($2); sub(/ \(.*/, "", row); gsub(/`/, "", row)
                prev = ""
                for (i = 3; i < NF; i++) {
                        c = trim($i)
                        claim = c ~ /^the same/ ? prev : span(c)
                        printf "%s\t%s\t%s\t%s\n", row, col[i], claim, c
                        prev = claim
                }
        }'
}

behaviour_rows() { behaviour_cells | cut -f1 | uniq; }

# the cells, read once a run (the table does not change while a lane runs)
BEHAVIOUR_CELLS=""
behaviour_cells_cached() {
        [ -n "$BEHAVIOUR_CELLS" ] || BEHAVIOUR_CELLS=$(behaviour_cells)
        printf '%s\n' "$BEHAVIOUR_CELLS"
}

behaviour_claim() {
        behaviour_cells_cached | awk -F'\t' -v r="$1" -v c="$2" '$1 == r && $2 == c { print $3; n++ } END { exit n != 1 }'
}

# ERE of a literal string (in the shell: a lane calls it for every claim,
# and a fork costs a second in an emulated guest)
behaviour_quote() {
        local s="$1" out="" c i
        for ((i = 0; i < ${#s}; i++)); do
                c=${s:i:1}
                case "$c" in
                [][\\.*^\$+?\(\){}\|]) out+="\\$c" ;;
                *) out+="$c" ;;
                esac
        done
        printf '%s' "$out"
}

# behaviour_expect ROW COL [KEY=VALUE...]: the anchored ERE; status 1 (with
# the reason on stderr) when the cell or a value for <parent> is missing, or
# the claim has a placeholder the grammar does not know
behaviour_expect() {
        local row="$1" col="$2" claim re rest name kv val
        shift 2
        if ! claim=$(behaviour_claim "$row" "$col") || [ -z "$claim" ]; then
                echo "behaviour: no claim for row '$row', column '$col' in $BEHAVIOUR_DOC" >&2
                return 1
        fi
        re=""; rest="$claim"
        while [ -n "$rest" ]; do
                case "$rest" in
                "<"[a-z]*">"*)
                        name=${rest#<}; name=${name%%>*}; rest=${rest#<"$name">}
                        val=""
                        for kv in "$@"; do
                                [ "${kv%%=*}" = "$name" ] && val=${kv#*=}
                        done
                        if [ -n "$val" ]; then re="$re$(behaviour_quote "$val")"; continue; fi
                        case "$name" in
                        root) re="${re}[A-Za-z0-9_-][A-Za-z0-9_.-]*" ;;
                        uid|n|sid|pid) re="${re}[0-9]+" ;;
                        session) re="${re}[sp][0-9]+(-[0-9]+)?" ;;
                        group) re="${re}(login|leaf-[0-9]+)" ;;
                        parent)
                                echo "behaviour: row '$row', column '$col' claims <parent>: the lane must give parent=PATH" >&2
                                return 1 ;;
                        *)
                                echo "behaviour: row '$row', column '$col': unknown placeholder <$name>" >&2
                                return 1 ;;
                        esac
                        ;;
                *)
                        # the literal text up to the next placeholder (or a lone "<")
                        name=${rest:1}; name=${rest:0:1}${name%%<*}
                        re="$re$(behaviour_quote "$name")"; rest=${rest:${#name}} ;;
                esac
        done
        printf '^%s$\n' "$re"
}

# behaviour_check ROW COL OBSERVED [KEY=VALUE...]
behaviour_check() {
        local row="$1" col="$2" obs="$3" re claim
        shift 3
        claim=$(behaviour_claim "$row" "$col" 2>/dev/null)
        if ! re=$(behaviour_expect "$row" "$col" "$@" 2>"${T:-/tmp}/behaviour.err"); then
                not_ok "table: $row, $col: $(cat "${T:-/tmp}/behaviour.err")"
                return 1
        fi
        if [[ "$obs" =~ $re ]]; then
                ok "table: $row, $col: $obs is \`$claim\`"
        else
                not_ok "table: $row, $col: README says \`$claim\`${*:+ ($*)}, the process is in '$obs'"
                return 1
        fi
}

# behaviour_lint: the rows and columns the lanes check, each with a claim
# whose placeholders the grammar knows
behaviour_lint() {
        local rows cols bad="" r c
        [ -f "$BEHAVIOUR_DOC" ] || { not_ok "table: $BEHAVIOUR_DOC is missing"; return 1; }
        rows=$(behaviour_rows | tr '\n' '|')
        check_eq "table: the rows of README's behaviour table" \
                "a login|a terminal tab or tmux pane|the seventh terminal|autogroup run CMD|a nohup job after logout|a cron job|root's login|" "$rows"
        cols=$(behaviour_cells | cut -f2 | awk '!s[$0]++' | tr '\n' ' ')
        check_eq "table: its columns" "v1 v2 systemd " "$cols"
        while IFS= read -r r; do
                for c in v1 v2 systemd; do
                        behaviour_expect "$r" "$c" parent=/ >/dev/null 2>&1 || bad="$bad [$r, $c]"
                done
        done < <(behaviour_rows)
        check_eq "table: every cell has a claim the grammar knows" "" "$bad"
}
