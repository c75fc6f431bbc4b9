"""Every procedure of the specification, written once and generic over the field."""
