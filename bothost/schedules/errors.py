"""The one error of the schedules package: a request it refuses, said in one line."""


class ScheduleError(ValueError):
    """A job that cannot be made, found or cancelled; the message is for the person."""
