// The exported descriptor of the megatron stack plugin.
#include "attune/plugin.h"
#include "megatron_stack.h"

ATTUNE_PLUGIN(attune::PluginKind::kStack, "megatron", "0.1.0", attune::megatron::Create)
