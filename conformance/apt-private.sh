# Shared by the setup scripts that fetch from another Debian suite (source it; bash only).
# The fetch goes through a private apt state (its own sources list, lists and cache under a work
# folder), so the machine's own apt sources are never modified; the archive is the machine's own
# main Debian mirror, never a hard-coded host.

# Print "URI<TAB>SIGNED_BY" of the machine's main (non-security) Debian mirror.
machine_mirror() {
    local f found
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -r "$f" ] || continue
        found="$(awk 'BEGIN { RS = ""; FS = "\n" }
        {
            uris = ""; suites = ""; signed = ""; enabled = 1
            for (i = 1; i <= NF; i++) {
                line = $i
                if (line ~ /^[ \t]*#/) continue
                key = tolower(line); sub(/:.*/, "", key)
                val = line; sub(/^[^:]*:[ \t]*/, "", val)
                if (key == "uris") uris = val
                else if (key == "suites") suites = val
                else if (key == "signed-by") signed = val
                else if (key == "enabled" && tolower(val) ~ /^no/) enabled = 0
            }
            if (!enabled || uris == "" || suites ~ /security/) next
            split(uris, u, /[ \t]+/)
            if (u[1] ~ /security/) next
            if (signed !~ /^\//) signed = ""
            printf "%s\t%s\n", u[1], signed
            exit
        }' "$f")"
        if [ -n "$found" ]; then printf '%s\n' "$found"; return; fi
    done
    if [ -r /etc/apt/sources.list ]; then
        awk '$1 == "deb" || $1 == "deb-src" {
            opts = ""; i = 2
            if ($2 ~ /^\[/) { while ($i !~ /\]$/) { opts = opts " " $i; i++ }; opts = opts " " $i; i++ }
            if ($i ~ /security/ || $(i + 1) ~ /security/) next
            signed = ""
            if (match(opts, /signed-by=[^] ]+/)) signed = substr(opts, RSTART + 10, RLENGTH - 10)
            printf "%s\t%s\n", $i, signed
            exit
        }' /etc/apt/sources.list
    fi
}

# private_apt WORK TYPE SUITE: write WORK/apt/sources.list with one line "TYPE <mirror> SUITE main"
# (TYPE: deb or deb-src), run apt-get update in that private state, and set the array APT_OPTS
# that makes apt-get and apt-cache use it. Dies (through `die`, defined by the caller) when the
# machine has no Debian mirror.
private_apt() {
    local work="$1" type="$2" suite="$3" mirror uri signed opt=""
    mirror="$(machine_mirror)"
    [ -n "$mirror" ] || die "no Debian mirror found in the machine's apt sources"
    uri="${mirror%%$'\t'*}"
    signed="${mirror#*$'\t'}"
    [ -n "$signed" ] && opt="[signed-by=$signed] "
    mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" \
        "$work/apt/sources.list.d"
    printf '%s %s%s %s main\n' "$type" "$opt" "$uri" "$suite" >"$work/apt/sources.list"
    APT_OPTS=(
        -o "Dir::Etc::SourceList=$work/apt/sources.list"
        -o "Dir::Etc::SourceParts=$work/apt/sources.list.d"
        -o "Dir::State::Lists=$work/apt/lists"
        -o "Dir::Cache=$work/apt/cache"
    )
    [ "$(id -u)" -eq 0 ] && APT_OPTS+=(-o "APT::Sandbox::User=root")
    apt-get "${APT_OPTS[@]}" update -qq
}
