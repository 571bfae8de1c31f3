"""The scripted model: offline scenarios (`scenarios`, `inline`) and the loopback model APIs that play them
(`backends`). Pure data and fakes: importing any of it starts nothing, and it knows no plugin host and no run.
"""
