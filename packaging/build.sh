#!/usr/bin/env bash
# Build Puffin Memory with PyInstaller (one folder, dist/puffin-memory/) and smoke-test it:
#   1. `puffin-memory --home <fresh temp> status` answers JSON and exits 0 (offscreen Qt),
#   2. `puffin-memory-cli --version` works (the console twin used on Windows),
#   3. `hook session-start` exits 0 (when the command line routes `hook`),
#   4. with no command the app starts, stays up, and quits cleanly (exit 0) on SIGTERM.
# Prints the build time and the size of the folder.
#
# Environment: PYTHON (default .venv/bin/python, must have PyInstaller: pip install -e
# '.[package]'), DIST (default dist), WORK (default build/pyinstaller), SMOKE=0 to skip the
# tests, GUI_SECONDS (default 6) how long the app must stay up before SIGTERM.
set -euo pipefail
cd "$(dirname "$0")/.."

PY="${PYTHON:-.venv/bin/python}"
DIST="${DIST:-dist}"
WORK="${WORK:-build/pyinstaller}"
SMOKE="${SMOKE:-1}"
GUI_SECONDS="${GUI_SECONDS:-6}"
APPDIR="$DIST/puffin-memory"

if ! "$PY" -c "import PyInstaller" 2>/dev/null; then
    echo "PyInstaller is not installed for $PY; run: $PY -m pip install -e '.[package]'" >&2
    exit 1
fi

start=$(date +%s)
"$PY" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath "$DIST" --workpath "$WORK" packaging/puffin-memory.spec
build_seconds=$(( $(date +%s) - start ))
size=$(du -sh "$APPDIR" | cut -f1)
echo "built $APPDIR in ${build_seconds} s, ${size} ($(find "$APPDIR" -type f | wc -l) files)"

if command -v desktop-file-validate >/dev/null 2>&1; then
    desktop-file-validate packaging/puffin-memory.desktop
fi

if [[ "$SMOKE" == "0" ]]; then
    exit 0
fi

BIN="$APPDIR/puffin-memory"
CLI="$APPDIR/puffin-memory-cli"
[[ -x "$BIN" && -x "$CLI" ]] || { echo "missing executables in $APPDIR" >&2; exit 1; }

scratch=$(mktemp -d)
gui_pid=""
cleanup() {
    if [[ -n "$gui_pid" ]] && kill -0 "$gui_pid" 2>/dev/null; then
        kill -KILL "$gui_pid" 2>/dev/null || true
    fi
    rm -rf "$scratch"
}
trap cleanup EXIT

# A fresh user home too, so the app's start-up scan cannot read this machine's transcripts
# and no real key or keyring is involved.
mkdir -p "$scratch/user"
smoke_env=(env -u ANTHROPIC_API_KEY -u PUFFIN_MEMORY_HOME HOME="$scratch/user"
           QT_QPA_PLATFORM=offscreen)

fail() {
    echo "SMOKE TEST FAILED: $1" >&2
    [[ -f "${2:-}" ]] && sed 's/^/  | /' "$2" >&2
    exit 1
}

# 1. status, from the windowed executable (on Linux it still prints to stdout).
if ! "${smoke_env[@]}" "$BIN" --home "$scratch/home" status >"$scratch/status.out" \
        2>"$scratch/status.err"; then
    fail "status exited non-zero" "$scratch/status.err"
fi
grep -q '"status"' "$scratch/status.out" || fail "status printed no JSON" "$scratch/status.out"
echo "smoke: status ok"

# 2. the console twin.
"${smoke_env[@]}" "$CLI" --version >"$scratch/version.out" 2>&1 \
    || fail "puffin-memory-cli --version failed" "$scratch/version.out"
echo "smoke: $(cat "$scratch/version.out") (console executable) ok"

# 3. the session-start hook, if the command line routes it.
if "${smoke_env[@]}" "$CLI" hook --help >/dev/null 2>&1; then
    mkdir -p "$scratch/repo/.git"
    echo "ref: refs/heads/main" >"$scratch/repo/.git/HEAD"
    printf '{"session_id":"smoke","transcript_path":"%s","cwd":"%s","source":"startup"}' \
        "$scratch/t.jsonl" "$scratch/repo" \
        | "${smoke_env[@]}" "$CLI" --home "$scratch/home" hook session-start \
            >"$scratch/hook.out" 2>&1 || fail "hook session-start exited non-zero" "$scratch/hook.out"
    echo "smoke: hook session-start ok"
else
    echo "smoke: hook session-start skipped (app.cli does not route 'hook' yet)"
fi

# 4. the app: starts, stays up, quits on SIGTERM with exit 0.
"${smoke_env[@]}" "$BIN" --home "$scratch/home-gui" >"$scratch/gui.log" 2>&1 &
gui_pid=$!
for _ in $(seq 1 $(( GUI_SECONDS * 10 ))); do
    kill -0 "$gui_pid" 2>/dev/null || break
    sleep 0.1
done
if ! kill -0 "$gui_pid" 2>/dev/null; then
    set +e; wait "$gui_pid"; code=$?; set -e
    gui_pid=""
    fail "the app exited by itself within ${GUI_SECONDS} s (exit $code)" "$scratch/gui.log"
fi
kill -TERM "$gui_pid"
for _ in $(seq 1 150); do
    kill -0 "$gui_pid" 2>/dev/null || break
    sleep 0.1
done
if kill -0 "$gui_pid" 2>/dev/null; then
    fail "the app did not quit within 15 s of SIGTERM" "$scratch/gui.log"
fi
set +e; wait "$gui_pid"; code=$?; set -e
gui_pid=""
[[ "$code" == "0" ]] || fail "the app exited with $code after SIGTERM" "$scratch/gui.log"
echo "smoke: app started, stayed up ${GUI_SECONDS} s, quit on SIGTERM with exit 0"
echo "all smoke tests passed (build ${build_seconds} s, ${size})"
