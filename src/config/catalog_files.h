#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "cost/catalog.h"

namespace gleaner::config {

// The price catalog a site uses: the shipped one with the rows of `files`
// ([cost] catalog_files) laid over it; an error names the file and line.
core::Result<cost::Catalog> LoadCatalog(const std::vector<std::string>& files);

}  // namespace gleaner::config
