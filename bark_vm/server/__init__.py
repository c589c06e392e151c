"""bark-worker: the Bark worker over CDP/HTTP (spec/wire.md §3, DESIGN D6, D8, R18-R21, R43).

One concept per module: `http` (request parsing, one-write responses), `auth`
(credentials, tokens, lock-out), `jobs` (the async job table), `runner` (the one executor
thread), `app` (the endpoints), `cli` (`bark-worker serve`). Never imports `maned`.
"""
