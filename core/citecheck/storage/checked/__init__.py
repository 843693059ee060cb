"""The checked store: checked answers as versioned, partitioned Parquet, and figures from it by DuckDB."""
