"""graphtx's own rankers, one a module (registered in ``graphtx.rank.registry.BUILT_IN``)."""
