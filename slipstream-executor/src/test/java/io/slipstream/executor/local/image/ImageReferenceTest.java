package io.slipstream.executor.local.image;

import static org.assertj.core.api.Assertions.assertThat;

import io.slipstream.executor.local.image.ImageReference.Transport;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ImageReferenceTest {
    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            oci-archive:/srv/images/app.tar        | OCI_ARCHIVE    | /srv/images/app.tar       | /srv/images/app.tar             | oci-archive:/srv/images/app.tar
            oci:/srv/layout:v1                     | OCI_LAYOUT     | /srv/layout               | /srv/layout/index.json          | oci:/srv/layout:v1
            oci:/srv/layout                        | OCI_LAYOUT     | /srv/layout               | /srv/layout/index.json          | oci:/srv/layout
            docker-archive:/srv/app-docker.tar     | DOCKER_ARCHIVE | /srv/app-docker.tar       | /srv/app-docker.tar             | docker-archive:/srv/app-docker.tar
            docker://registry.example.com/team/app:1.2 | REGISTRY   |                           |                                 | docker://registry.example.com/team/app:1.2
            python:3.11                            | REGISTRY       |                           |                                 | docker://python:3.11
            registry.example.com:5000/app@sha256:0123abcd | REGISTRY |                          |                                 | docker://registry.example.com:5000/app@sha256:0123abcd
            """)
    void readsEachTransport(String image, Transport transport, String path, String marker, String asSkopeoTakesIt) {
        ImageReference reference = ImageReference.parse(image);
        assertThat(reference.transport()).isEqualTo(transport);
        assertThat(reference.path()).isEqualTo(path);
        if (marker != null) {
            assertThat(reference.changeMarker()).isEqualTo(marker);
        }
        assertThat(reference).hasToString(asSkopeoTakesIt);
        assertThat(ImageReference.problem(image)).isNull();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
            oci-archive:relative/app.tar           | 'relative/app.tar' is not an absolute path
            oci-archive:/srv/../etc/shadow         | must not contain '..'
            oci:/srv/layout:bad tag                | must not contain spaces
            oci:/srv/layout:-x                     | '-x' is not a tag
            oci-archive:/srv/app.tar:other         | an archive's path must not contain ':'
            dir:/srv/rootfs                        | transport 'dir' is not supported
            containers-storage:app                 | transport 'containers-storage' is not supported
            docker-daemon:app:1                    | transport 'docker-daemon' is not supported
            Python:3                               | is not an image reference
            docker://                              | is not an image reference
            docker://localhost:5000/app            | registry 'localhost' is an address of this machine
            127.0.0.1:8080/api/v1/runs             | registry '127.0.0.1' is an address of this machine
            docker://169.254.169.254/latest        | registry '169.254.169.254' is an address of this machine
            "   "                                  | is empty
            """)
    void refusesWhatItCannotRead(String image, String problem) {
        assertThat(ImageReference.problem(image)).contains(problem);
    }
}
