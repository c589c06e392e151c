"""Getting values in and out: csv files, `--in` values, `in::` loading."""
