"""The facts every layer reads, as plain data and without torch: settings profiles and tolerances,
the torch build, backend traits and the zoo's variants. Imports nothing else of trtcheck's."""
