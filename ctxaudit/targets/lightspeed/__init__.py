"""The lightspeed-stack target: source trees (tree.py) and their Python 3.12
environments (env.py)."""
