"""The typed error every convolution entry point raises for bad input."""


class ConvConfigError(ValueError):
    """A convolution configuration that breaks a rule.

    The message always has the form ``"<parameter>=<value>: <rule>"`` so that a user (or the
    conformance harness comparing error behaviour across frameworks) can see which argument is
    wrong and why, without reading a traceback.
    """

    def __init__(self, parameter: str, value, rule: str):
        self.parameter = parameter
        self.value = value
        self.rule = rule
        super().__init__(f"{parameter}={value!r}: {rule}")
