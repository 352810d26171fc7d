namespace histogram {
int histogram_main(int argc, const char* const* argv);
}

int main(int argc, char** argv) { return histogram::histogram_main(argc, argv); }
