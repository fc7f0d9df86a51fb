"""Placement groups of the stand-in (tests only; not Ray): ready at once when the stand-in's nodes
can hold the bundles as the strategy asks, else never (Ray's stays pending)."""

STRATEGIES = ('PACK', 'SPREAD', 'STRICT_PACK', 'STRICT_SPREAD')


class PlacementGroup:
    def __init__(self, bundles, strategy):
        import ray
        if strategy not in STRATEGIES:
            raise ValueError('Invalid placement group strategy %s' % strategy)
        self.bundle_specs = bundles
        self.strategy = strategy
        nodes = ray.nodes()
        fits = all(all(b.get(k, 0) <= n['Resources'].get(k, 0) for k in b)
                   for b in bundles for n in nodes[:1])
        self._placed = fits and (strategy != 'STRICT_SPREAD' or len(bundles) <= len(nodes))
        self._ready = ray.ObjectRef()
        if self._placed:
            self._ready._set(True)

    def ready(self):
        return self._ready


def placement_group(bundles, strategy='PACK', name='', lifetime=None):
    for b in bundles:
        if not b or all(v == 0 for v in b.values()):
            raise ValueError('Bundles cannot be an empty dictionary or resources with only 0 values.')
    return PlacementGroup([dict(b) for b in bundles], strategy)


def remove_placement_group(pg):
    pg._placed = False
