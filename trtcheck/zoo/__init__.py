"""The zoo: the `@trtcheck.model` API, finding zoo files, and expanding models into cases."""
