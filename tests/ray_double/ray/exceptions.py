"""The stand-in's exceptions, named as Ray names them (tests only; not Ray)."""


class RayError(Exception):
    pass


class GetTimeoutError(RayError, TimeoutError):
    pass


class RayActorError(RayError):
    pass
