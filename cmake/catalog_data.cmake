# Embeds the catalog files (data/models/*.yaml, data/accelerators/*.yaml) into the
# library as a generated .cc (see src/catalog/embedded_data.h), so an installed binary
# needs no data directory. The .cc is regenerated whenever a data file changes; new
# files are picked up on re-configure (CONFIGURE_DEPENDS).
file(GLOB INFERENG_CATALOG_FILES CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/data/models/*.yaml
  ${PROJECT_SOURCE_DIR}/data/accelerators/*.yaml)
list(SORT INFERENG_CATALOG_FILES)
set(_catalog_cc ${PROJECT_BINARY_DIR}/generated/catalog_data.cc)
add_custom_command(
  OUTPUT ${_catalog_cc}
  COMMAND ${CMAKE_COMMAND} -DOUT=${_catalog_cc} -DROOT=${PROJECT_SOURCE_DIR}/data
          "-DFILES=${INFERENG_CATALOG_FILES}" -P ${PROJECT_SOURCE_DIR}/cmake/embed_catalog.cmake
  DEPENDS ${INFERENG_CATALOG_FILES} ${PROJECT_SOURCE_DIR}/cmake/embed_catalog.cmake
  COMMENT "Embedding the model and accelerator catalogs"
  VERBATIM)
list(APPEND INFERENG_GENERATED_SOURCES ${_catalog_cc})
