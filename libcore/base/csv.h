// Writing CSV cells the way every npukit report does.
#pragma once
#include <string>
#include <string_view>

namespace npu {

// Quotes a cell holding , " or a line break; a leading = + @ gets a ' so spreadsheets do not run it
// as a formula ('-' stays: reports hold negative numbers).
std::string CsvCell(std::string_view s);

}  // namespace npu
