"""``sweepbench view``: a local web viewer of run stores (leaderboard, episode lists,
conversations with tool calls, judge verdicts and windows, side by side).

``queries`` is the only module that reads a store; ``episode`` assembles one episode's page;
``server`` is the aiohttp app; ``static/`` is the page (plain HTML, CSS and JS, no build).
"""
