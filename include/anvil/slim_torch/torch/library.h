// anvil's slim <torch/library.h> (see ../README.md): empty. A source that
// registers operators builds with torch's full headers instead.
#pragma once
