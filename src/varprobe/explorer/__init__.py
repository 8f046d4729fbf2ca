"""The run's explorer: a static page per run showing every Provo context and every production
input of the run's tables (``data``: the tables as compact arrays; ``page``: the folder written).
It reads tables only, never models or sampling."""
