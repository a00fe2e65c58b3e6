// The harness (Sources/Harness) is part of every test's support: the tests import TestSupport only.
@_exported import Harness
