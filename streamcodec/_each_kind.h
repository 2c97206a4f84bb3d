/* Include KIND_HEADER (a path from this folder) once per PEP 393 string kind, with
 *   CH         the code unit type (Py_UCS1, Py_UCS2 or Py_UCS4),
 *   K(name)    the name with the kind's suffix (name_1, name_2, name_4),
 * so that one loop, written once, is compiled for each kind. Needs Python.h first.
 *
 *     #define KIND_HEADER "text/_scan_kind.h"
 *     #include "../_each_kind.h"        // scan_1, scan_2, scan_4...
 */
#define CH Py_UCS1
#define K(name) name##_1
#include KIND_HEADER
#undef CH
#undef K
#define CH Py_UCS2
#define K(name) name##_2
#include KIND_HEADER
#undef CH
#undef K
#define CH Py_UCS4
#define K(name) name##_4
#include KIND_HEADER
#undef CH
#undef K
#undef KIND_HEADER
