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
