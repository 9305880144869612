

raise ImportError("this zoo file needs a package that is not installed")
