"""Where citecheck reads and writes: the one line reader (:mod:`.lines`) and durable writer
(:mod:`.durable`) every file goes through, the append-only event streams of labels and verdicts
(:mod:`.events`, on a file or on PostgreSQL through :mod:`.postgres`), and the checked store of
Parquet parts (:mod:`.checked`, which sits higher on the ladder: it checks answers and makes figures)."""
