// Includes Catch2 2.x or 3.x, whichever the build found.
#pragma once
#ifdef REDUCTION_CATCH2_V3
#include <catch2/catch_approx.hpp>
#include <catch2/catch_session.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif
