"""``trtcheck reduce``: each failing row becomes the smallest exported graph that still fails the
same way, with a bundle a Torch-TensorRT maintainer can run (:mod:`trtcheck.reduce.reducer`)."""
