"""Event contracts: subjects, stream and consumer configs, msgspec events"""
