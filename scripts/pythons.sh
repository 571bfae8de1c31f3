# Sourced: put every Python of the test matrix (3.10-3.13) on PATH at once when they come from pyenv
# (tox's interpreter discovery does not see through pyenv shims).
if command -v pyenv >/dev/null 2>&1; then
  for _minor in 11 10 12 13; do
    _dir="$(pyenv root)/versions/$(pyenv versions --bare | grep -E "^3\.${_minor}\.[0-9]+$" | tail -n 1)/bin"
    if [ -x "$_dir/python3.${_minor}" ]; then _dirs="${_dirs:+$_dirs:}$_dir"; fi
  done
  PATH="${_dirs:+$_dirs:}$PATH"; export PATH
  unset _minor _dir _dirs
fi
# A `pyenv rehash` killed midway leaves its lock behind, and every login shell (`bash -l`, which agent CLIs
# use to run commands) then waits 60 s on it. Clear a lock that is clearly stale.
if command -v pyenv >/dev/null 2>&1; then
  _lock="$(pyenv root)/shims/.pyenv-shim"
  if [ -e "$_lock" ] && [ -n "$(find "$_lock" -mmin +10 2>/dev/null)" ]; then
    echo "pythons.sh: removing a stale pyenv rehash lock ($_lock)" >&2
    rm -f "$_lock"
  fi
  unset _lock
fi
