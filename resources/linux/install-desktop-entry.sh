#!/bin/sh
# Put Parley in your applications menu (Linux, freedesktop desktops), or take it out.
#
# Usage: install-desktop-entry.sh [--exec PATH] [--uninstall]
#
# Installs, for the current user only (no root needed):
#   $XDG_DATA_HOME/applications/org.parley.Parley.desktop   (default XDG_DATA_HOME: ~/.local/share)
#   $XDG_DATA_HOME/icons/hicolor/<n>x<n>/apps/org.parley.Parley.png and scalable/.../.svg
# The entry starts, in order: --exec PATH; the bundled executable next to this
# script (packaged app); .venv/bin/parley of the source tree this script is in;
# `parley` found on PATH; only one that runs (`PATH --version` answers "Parley …";
# a script's #! interpreter must exist) is written, else nothing is and the
# reason is said. --uninstall removes exactly the files listed above.
# Run it again after moving Parley. Exit status: 0 done, 1 failed, 2 bad usage.
set -eu

APP_ID=org.parley.Parley
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
data="${XDG_DATA_HOME:-$HOME/.local/share}"
apps="$data/applications"
icons="$data/icons/hicolor"

die() { echo "install-desktop-entry: $*" >&2; exit 1; }

exec_path=""
uninstall=0
while [ $# -gt 0 ]; do
    case "$1" in
        --exec) [ $# -ge 2 ] || { echo "usage: $0 [--exec PATH] [--uninstall]" >&2; exit 2; }
                exec_path=$2; shift 2 ;;
        --exec=*) exec_path=${1#--exec=}; shift ;;
        --uninstall) uninstall=1; shift ;;
        -h|--help) sed -n '2,14s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "usage: $0 [--exec PATH] [--uninstall]" >&2; exit 2 ;;
    esac
done

refresh() {
    touch "$icons" 2>/dev/null || true  # icon themes notice a changed folder
    if command -v update-desktop-database >/dev/null 2>&1; then
        update-desktop-database -q "$apps" 2>/dev/null || true
    fi
    # Only refresh an icon cache that already exists: a stale user cache hides icons.
    if [ -f "$icons/icon-theme.cache" ] && command -v gtk-update-icon-cache >/dev/null 2>&1; then
        gtk-update-icon-cache -q -t -f "$icons" 2>/dev/null || true
    fi
}

if [ "$uninstall" = 1 ]; then
    rm -f "$apps/$APP_ID.desktop" "$icons/scalable/apps/$APP_ID.svg" "$icons"/*/apps/"$APP_ID".png
    refresh
    echo "Removed Parley's menu entry and icons from $data"
    exit 0
fi

# Where the entry template and icons are: beside this script (source tree,
# resources/linux) or inside a packaged app (_internal/parley/resources/linux).
if [ -f "$here/$APP_ID.desktop" ]; then
    res="$here"
elif [ -f "$here/_internal/parley/resources/linux/$APP_ID.desktop" ]; then
    res="$here/_internal/parley/resources/linux"
else
    die "cannot find $APP_ID.desktop beside this script"
fi

# why_not PATH: prints nothing when PATH runs as Parley, else why it does not.
why_not() {
    if ! [ -f "$1" ] || ! [ -x "$1" ]; then
        echo "$1 is not an executable file"; return
    fi
    shebang=$(head -c 2 -- "$1" 2>/dev/null || true)
    if [ "$shebang" = "#!" ]; then
        interp=$(head -n 1 -- "$1" | sed -e 's/^#![[:space:]]*//' -e 's/[[:space:]].*$//')
        if ! [ -x "$interp" ]; then
            echo "$1 does not run: its interpreter $interp does not exist (was Parley's" \
                 "folder or virtual environment moved? Install Parley again there, e.g." \
                 "'pip install .' in a new venv, then run this again)"
            return
        fi
    fi
    if command -v timeout >/dev/null 2>&1; then
        said=$(QT_QPA_PLATFORM=offscreen timeout 60 "$1" --version 2>&1 </dev/null) || true
    else
        said=$(QT_QPA_PLATFORM=offscreen "$1" --version 2>&1 </dev/null) || true
    fi
    case "$said" in
        "Parley "*) ;;
        *) echo "$1 does not run as Parley: '$1 --version' said:" \
                "$(printf '%s' "$said" | tail -n 3 | tr '\n' ' ' | cut -c 1-300)" ;;
    esac
}

if [ -n "$exec_path" ]; then
    reason=$(why_not "$exec_path")
    [ -z "$reason" ] || die "not writing a menu entry: $reason"
else
    reasons=""
    onpath=$(command -v parley 2>/dev/null || true)
    for candidate in "$here/parley" "$here/../../.venv/bin/parley" "$onpath"; do
        [ -n "$candidate" ] && [ -e "$candidate" ] || continue
        candidate=$(CDPATH= cd -- "$(dirname -- "$candidate")" && pwd)/$(basename -- "$candidate")
        reason=$(why_not "$candidate")
        if [ -z "$reason" ]; then exec_path=$candidate; break; fi
        reasons="$reasons
  $reason"
    done
    if [ -z "$exec_path" ] && [ -n "$reasons" ]; then
        die "not writing a menu entry: no Parley here runs:$reasons
Pass the one to start with --exec PATH."
    fi
    [ -n "$exec_path" ] || \
        die "cannot find Parley's executable; install Parley first or pass --exec PATH"
fi
exec_path=$(CDPATH= cd -- "$(dirname -- "$exec_path")" && pwd)/$(basename -- "$exec_path")

# Desktop-entry quoting (freedesktop Desktop Entry spec, "The Exec key"): a
# path with only safe characters is written as is; any other is double-quoted
# with \ " ` $ escaped (string-level escaping doubles each backslash) and % doubled.
case "$exec_path" in
    *[!A-Za-z0-9/._+-]*)
        escaped=$(printf '%s' "$exec_path" |
                  sed -e 's/\\/\\\\\\\\/g' -e 's/["`$]/\\\\&/g' -e 's/%/%%/g')
        exec_line="\"$escaped\"" ;;
    *) exec_line=$exec_path ;;
esac
try_exec=$(printf '%s' "$exec_path" | sed -e 's/\\/\\\\/g')

mkdir -p "$apps" "$icons/scalable/apps"
EXEC_LINE=$exec_line TRY_EXEC=$try_exec awk '
    /^Exec=/    { print "Exec=" ENVIRON["EXEC_LINE"]; next }
    /^TryExec=/ { print "TryExec=" ENVIRON["TRY_EXEC"]; next }
    { print }
' "$res/$APP_ID.desktop" > "$apps/$APP_ID.desktop.tmp"
mv -f "$apps/$APP_ID.desktop.tmp" "$apps/$APP_ID.desktop"

for png in "$res"/icons/hicolor/*/apps/"$APP_ID".png; do
    [ -f "$png" ] || die "no PNG icons in $res/icons (run packaging/make_icons.py)"
    size=$(basename "$(dirname "$(dirname "$png")")")
    mkdir -p "$icons/$size/apps"
    cp -f "$png" "$icons/$size/apps/$APP_ID.png"
done
svg="$res/../icons/parley.svg"
[ -f "$svg" ] && cp -f "$svg" "$icons/scalable/apps/$APP_ID.svg"

refresh
echo "Installed Parley's menu entry: $apps/$APP_ID.desktop"
echo "  starts: $exec_path"
echo "  icons:  $icons/<size>/apps/$APP_ID.png"
