# Sourced by the scripts that boot kvod's test container (systemd-nspawn-test.sh,
# deb-nspawn-test.sh): logging, checks, running commands inside, booting and
# powering off, and the cleanup that kills the container and deletes its tree.
# The sourcing script sets nspawn_name (its log prefix), then $machine (the
# tree to boot) before boot_container.
# Booted with --register=no --keep-unit (the host has no system bus) and reached
# with `nsenter -t <its systemd> -a`. Never boot systemd with a bare unshare on a
# host: it takes over the host's /dev and ttys.

started=$(date +%s)
say() { echo "$nspawn_name: [$(( $(date +%s) - started ))s] $*"; }
ok() { echo "  ok  $*"; }

machine=""
nspawn_pid=""
init_pid=""
log=$(mktemp /tmp/kvod-nspawn-log.XXXXXX)

# inside CMD...: runs CMD inside the container, as root, with a plain environment.
inside() { nsenter -t "$init_pid" -a -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }

fail() {
  echo "$nspawn_name: FAIL: $*" >&2
  if [ -n "$init_pid" ] && kill -0 "$init_pid" 2>/dev/null; then
    echo "---- systemctl status kvod.socket kvod.service" >&2
    inside systemctl --no-pager status kvod.socket kvod.service >&2 || true
    echo "---- journal (last 60 lines)" >&2
    inside journalctl -b --no-pager -n 60 >&2 || true
  fi
  echo "---- systemd-nspawn output (last 20 lines)" >&2
  tail -n 20 "$log" >&2 || true
  exit 1
}
trap 'fail "command failed at line $LINENO: $BASH_COMMAND"' ERR

# expect WHAT EXPECTED ACTUAL
expect() {
  if [ "$2" == "$3" ]; then ok "$1"; else fail "$1: expected '$2', got '$3'"; fi
}

# wait_for WHAT SECONDS CMD...: polls CMD until it succeeds or the deadline passes.
wait_for() {
  local what=$1 deadline=$(( $(date +%s) + $2 ))
  shift 2
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || fail "timed out waiting until $what"
    sleep 0.2
  done
  ok "$what"
}

cleanup() {
  set +e
  if [ -n "$init_pid" ] && kill -0 "$init_pid" 2>/dev/null; then
    # Killing the container's init ends every process of its PID namespace.
    kill -KILL "$init_pid"
  fi
  [ -n "$nspawn_pid" ] && wait "$nspawn_pid" 2>/dev/null
  [ -n "$machine" ] && rm -rf --one-file-system "$machine"
  rm -f "$log"
}
trap cleanup EXIT

show() { inside systemctl show -p "$1" --value "$2"; }

# kvod_round_trip AS_USER: observe, set, and print what came back.
round_trip() {
  local user=$1
  inside setpriv --reuid="$user" --regid="$(inside id -g "$user")" --init-groups -- sh -c '
    printf "%s\n%s\n" \
      "{\"op\":\"observe\",\"object\":\"ci\",\"keyPath\":\"answer\",\"options\":[\"new\"]}" \
      "{\"op\":\"set\",\"object\":\"ci\",\"keyPath\":\"answer\",\"value\":42}" |
    timeout 20 socat -t 5 - UNIX-CONNECT:/run/kvod/kvod.sock'
}

# boot_container: boots systemd in $machine and waits until it runs; sets
# nspawn_pid and init_pid.
boot_container() {
  say "booting systemd in systemd-nspawn"
  systemd-nspawn -D "$machine" --register=no --keep-unit --private-network -b --console=passive >"$log" 2>&1 &
  nspawn_pid=$!
  local deadline state
  find_init() {
    local child
    for child in $(pgrep -P "$nspawn_pid"); do
      # The container's PID 1 (its last NSpid is 1) once it has become systemd:
      # before the exec it is still nspawn setting up the container.
      if awk '/^NSpid:/ { exit ($NF == 1 ? 0 : 1) }' "/proc/$child/status" 2>/dev/null &&
         [ "$(cat "/proc/$child/comm" 2>/dev/null)" == systemd ]; then
        init_pid=$child
        return 0
      fi
    done
    kill -0 "$nspawn_pid" 2>/dev/null || fail "systemd-nspawn exited: $(tail -n 5 "$log")"
    return 1
  }
  deadline=$(( $(date +%s) + 30 ))
  until find_init; do
    [ "$(date +%s)" -lt "$deadline" ] || fail "no container init after 30s"
    sleep 0.2
  done
  # Until the container's systemd has its private socket, systemctl prints nothing.
  systemd_answers() { [ -n "$(inside systemctl is-system-running 2>/dev/null)" ]; }
  wait_for "the container's systemd answers systemctl" 60 systemd_answers
  state=$(inside timeout 120 systemctl is-system-running --wait || true)
  case "$state" in
    running) ok "the container's systemd is running" ;;
    degraded) ok "the container's systemd is running (degraded: $(inside systemctl --failed --no-legend --plain | awk '{print $1}' | tr '\n' ' '))" ;;
    *) fail "systemctl is-system-running: $state" ;;
  esac
}

# poweroff_container: shuts the container down and checks that it went cleanly.
poweroff_container() {
  local deadline code
  say "poweroff"
  inside systemctl poweroff --no-block
  deadline=$(( $(date +%s) + 60 ))
  while kill -0 "$nspawn_pid" 2>/dev/null; do
    [ "$(date +%s)" -lt "$deadline" ] || fail "the container did not power off within 60s"
    sleep 0.2
  done
  wait "$nspawn_pid" && code=0 || code=$?
  init_pid=""
  nspawn_pid=""
  expect "the container powered off cleanly (systemd-nspawn exit status)" 0 "$code"
}
