#!/bin/sh
# Runs a command against a real, unlocked Secret Service: a private D-Bus session bus
# (dbus-run-session) with a throwaway gnome-keyring whose keyrings live in a temp dir.
# Usage: scripts/withKeyring.sh <command> [args...]   (exit status is the command's)
# Needs: apt-get install -y gnome-keyring dbus
set -eu

if [ "$#" -eq 0 ]; then
  echo "usage: $0 <command> [args...]" >&2
  exit 64
fi
for tool in dbus-run-session dbus-send gnome-keyring-daemon; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "withKeyring: $tool not found; install it with: apt-get install -y gnome-keyring dbus" >&2
    exit 127
  fi
done

# Private keyring files and runtime dir: never the user's real login keyring.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tuicd-keyring.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -m 700 "$scratch/data" "$scratch/run"

unset DBUS_SESSION_BUS_ADDRESS GNOME_KEYRING_CONTROL
XDG_DATA_HOME="$scratch/data" XDG_RUNTIME_DIR="$scratch/run" \
  dbus-run-session -- sh -c '
    # gnome-keyring only creates the "login" keyring (the default collection) for a non-empty
    # password. --foreground keeps the daemon our child so we know its pid and can stop it.
    printf %s tuicd-test-keyring | gnome-keyring-daemon --foreground --unlock --components=secrets \
      >"$XDG_RUNTIME_DIR/gnome-keyring.log" 2>&1 &
    keyring_pid=$!
    stop_keyring() { kill "$keyring_pid" 2>/dev/null || :; wait "$keyring_pid" 2>/dev/null || :; }
    trap stop_keyring EXIT
    trap "exit 143" TERM
    trap "exit 130" INT
    tries=0
    until dbus-send --session --print-reply --dest=org.freedesktop.DBus / \
        org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q "boolean true"; do
      tries=$((tries + 1))
      if [ "$tries" -ge 100 ] || ! kill -0 "$keyring_pid" 2>/dev/null; then
        echo "withKeyring: gnome-keyring-daemon did not come up:" >&2
        cat "$XDG_RUNTIME_DIR/gnome-keyring.log" >&2
        exit 69
      fi
      sleep 0.1
    done
    status=0
    "$@" || status=$?
    exit "$status"
  ' withKeyring "$@"
