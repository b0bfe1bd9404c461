# Run by the `slides` target (cmake -P): turns every deck SLIDES_DIR/NN_*.md into
# OUTPUT_DIR/NN_*.html with the Marp CLI pinned by slides/package-lock.json, and into
# OUTPUT_DIR/NN_*.pdf when CHROME names a Chromium-based browser. A deck whose outputs are newer
# than its source (and than every figure) is skipped. Fails with instructions when Node.js or the
# Marp CLI is missing.
#
# Figures: the decks show the course's diagrams by their path in the repository,
# ../docs/figures/<name>.svg, which GitHub renders too. The script copies FIGURES_DIR (default
# SLIDES_DIR/../docs/figures) to OUTPUT_DIR/figures and gives Marp a copy of each deck, written
# next to the outputs (NN_topic.source.md), in which ../docs/figures/ reads figures/: the HTML then finds its pictures
# beside it, and the PDF has them embedded. The copy is deleted once the deck is built.
#
#   cmake -DSLIDES_DIR=slides -DOUTPUT_DIR=build/slides [-DCHROME=/usr/bin/chromium] -P BuildSlides.cmake
# PDF_WANTED=OFF (the CMake option GS_SLIDES_PDF) only changes the closing note.
cmake_minimum_required(VERSION 3.24)

foreach(required SLIDES_DIR OUTPUT_DIR)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "BuildSlides.cmake: pass -D${required}=...")
  endif()
endforeach()

set(install_hint
  "Install what is missing with one of:\n"
  "    bash scripts/setup.sh                      (apt packages, then npm ci in slides/)\n"
  "    cd slides && npm ci                        (needs Node.js >= 18 and npm)\n"
  "Node.js and npm come from your package manager (Debian/Ubuntu: sudo apt-get install nodejs npm).")

find_program(node_executable NAMES node nodejs)
if(NOT node_executable)
  message(FATAL_ERROR "slides: Node.js was not found; the Marp CLI needs it.\n" ${install_hint})
endif()

set(marp "${SLIDES_DIR}/node_modules/.bin/marp")
if(NOT EXISTS "${marp}")
  message(FATAL_ERROR "slides: the Marp CLI is not installed (${marp} is missing).\n" ${install_hint})
endif()

file(GLOB decks LIST_DIRECTORIES false "${SLIDES_DIR}/[0-9][0-9]_*.md")
list(SORT decks)
if(NOT decks)
  message(FATAL_ERROR "slides: no deck matches ${SLIDES_DIR}/NN_*.md")
endif()

file(MAKE_DIRECTORY "${OUTPUT_DIR}")
# Pictures the decks show travel with the HTML: the course's figures (docs/figures, referenced
# as ../docs/figures/<name> from a deck) and pictures of the slides alone (images/<name>).
if(NOT DEFINED FIGURES_DIR)
  get_filename_component(FIGURES_DIR "${SLIDES_DIR}/../docs/figures" ABSOLUTE)
endif()
set(figures "")
if(IS_DIRECTORY "${FIGURES_DIR}")
  file(REMOVE_RECURSE "${OUTPUT_DIR}/figures")
  file(COPY "${FIGURES_DIR}/" DESTINATION "${OUTPUT_DIR}/figures")
  file(GLOB figures LIST_DIRECTORIES false "${FIGURES_DIR}/*")
endif()
if(IS_DIRECTORY "${SLIDES_DIR}/images")
  file(COPY "${SLIDES_DIR}/images" DESTINATION "${OUTPUT_DIR}")
endif()

set(formats html)
if(CHROME)
  list(APPEND formats pdf)
  set(ENV{CHROME_PATH} "${CHROME}")
endif()

set(built 0)
set(up_to_date 0)
foreach(deck IN LISTS decks)
  get_filename_component(name "${deck}" NAME_WE)
  # The copy Marp reads: the deck with ../docs/figures/ pointing at OUTPUT_DIR/figures/.
  set(deck_copy "${OUTPUT_DIR}/${name}.source.md")
  set(copied FALSE)
  foreach(format IN LISTS formats)
    set(output "${OUTPUT_DIR}/${name}.${format}")
    set(stale FALSE)
    if(NOT EXISTS "${output}")
      set(stale TRUE)
    else()
      foreach(source IN LISTS deck figures ITEMS "${SLIDES_DIR}/package-lock.json")
        if("${source}" IS_NEWER_THAN "${output}")
          set(stale TRUE)
          break()
        endif()
      endforeach()
    endif()
    if(NOT stale)
      math(EXPR up_to_date "${up_to_date} + 1")
      continue()
    endif()
    if(NOT copied)
      file(READ "${deck}" text)
      string(REPLACE "../docs/figures/" "figures/" text "${text}")
      file(WRITE "${deck_copy}" "${text}")
      set(copied TRUE)
    endif()
    set(arguments --html --allow-local-files --output "${output}")
    if(format STREQUAL "pdf")
      list(APPEND arguments --pdf)
    endif()
    message(STATUS "slides: ${name}.md -> ${output}")
    execute_process(
      COMMAND "${marp}" ${arguments} -- "${deck_copy}"
      WORKING_DIRECTORY "${SLIDES_DIR}"
      RESULT_VARIABLE status
      OUTPUT_VARIABLE log
      ERROR_VARIABLE log)
    if(NOT status EQUAL 0 OR NOT EXISTS "${output}")
      file(REMOVE "${output}" "${deck_copy}")
      message(FATAL_ERROR "slides: marp failed on ${deck} (${status}):\n${log}")
    endif()
    math(EXPR built "${built} + 1")
  endforeach()
  file(REMOVE "${deck_copy}")
endforeach()

if(NOT CHROME AND DEFINED PDF_WANTED AND NOT PDF_WANTED)
  set(pdf_note " (no PDF: GS_SLIDES_PDF is OFF)")
elseif(NOT CHROME)
  set(pdf_note " (no PDF: no Chromium found; install chromium and re-run CMake for PDFs)")
endif()
list(LENGTH decks deck_count)
message(STATUS "slides: ${deck_count} deck(s), ${built} file(s) built, ${up_to_date} up to date, "
               "in ${OUTPUT_DIR}${pdf_note}")
