// Broken on purpose: a shared object without the attune_plugin alias.
extern "C" __attribute__((visibility("default"))) int attune_not_a_plugin() { return 42; }
