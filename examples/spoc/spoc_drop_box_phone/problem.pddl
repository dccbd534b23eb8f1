(define (problem basic-problem)
 (:domain basic-domain)
 (:objects
   box - container
   bed desk - receptacle
 )
 (:init
              (on box bed)
              (on cell_phone bed)
              (hands_free)
 )
 (:goal (and 
           (in cell_phone box)
           (on box desk)
           (not (box_open box))
        )
 )
)
