// Separate compilation of Boost.Asio and Boost.Beast (BOOST_*_SEPARATE_COMPILATION is set
// for the whole library): their implementation is compiled once, here, which keeps every
// other networking file fast to build.
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
