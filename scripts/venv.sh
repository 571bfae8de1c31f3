# Sourced by setup.sh: make sure .venv (in the current directory) is a whole virtual environment. A first setup
# interrupted while `python3 -m venv` ran leaves .venv/bin/python without pip, and every later install would fail:
# such a .venv is made again, and setup says so.
if [ -x .venv/bin/python ] && ! .venv/bin/python -m pip --version >/dev/null 2>&1; then
  echo "setup: .venv has no pip (an earlier setup was interrupted?): removing it and making it again"
  rm -rf .venv
fi
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $(python3 --version)"
  python3 -m venv .venv
fi
