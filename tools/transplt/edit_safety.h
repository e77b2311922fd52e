// Which edits cannot change how a file parses, so the migrated file need not be parsed again to prove it.
#pragma once
#include <string_view>

#include "migrate.h"

namespace transplt {

// True when `e`, applied to `text` (parsed as `root`), provably keeps the file's syntax:
//  - one dotted name replaced by another at token boundaries (`cuda` -> `npu`, `torch.cuda` -> `torch_npu.npu`),
//    with no keyword among the new names; inside a string or comment this is inert too;
//  - `import NAME` inserted as a line of its own, with the same indentation, before a line that starts a
//    statement of a module or block.
// Anything else (argument edits, inserted blocks, custom rule text) is checked by parsing the result.
bool KeepsSyntax(const Edit& e, std::string_view text, TSNode root);

}  // namespace transplt
