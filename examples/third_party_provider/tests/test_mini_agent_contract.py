from harness_core.testing.contract import ProviderContract


class TestMiniAgentContract(ProviderContract):
    provider_name = "mini-agent"
