"""What the integration suites, the module's suites and the benchmarks
share, importable as `support` with tests/ on PYTHONPATH (ctest sets it;
the benchmark scripts put it on their own path):

  support.resp       the RESP client (RESP2 and RESP3, TLS optional)
  support.proc       the launcher of cuckood and redis-server (with or
                     without the module), free_port, wait_until
  support.tls_certs  certificates made at run time for the TLS tests
  support.growth     a filter's exact multiset and the random drivers of
                     the growth suites

Nothing else starts a server, parses replies off a socket or polls with a
deadline.
"""
