(define (problem basic-problem)
 (:domain basic-domain)
 (:objects
   mug - item
   fridge - container
   counter_top dining_table - receptacle
 )
 (:init
              (on egg counter_top)
              (on mug counter_top)
              (hands_free)
 )
 (:goal (and 
           (in egg fridge)
           (on mug dining_table)
           (not (fridge_open fridge))
        )
 )
)
